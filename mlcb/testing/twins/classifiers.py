"""A slow, obvious pure-Python twin of the compiled online classifiers (agents/classifiers.py).

One object per expert, plain lists and ``math``; written from the module's docstring, not from
the kernels: the standardisation by the expert's own running moments (before the row is folded
in), the argmax with ties to the smaller class, the 0-1 loss, then the softmax's projected OGD
step or the perceptron's mistake update, then the moments.
"""

from __future__ import annotations

import math


def rate(coefficient: float, scale: float, n: int, delta_prime: float) -> float:
    """``min(n, scale (c sqrt(n) + sqrt((n/2) log(2 n^2 / delta'))))``."""
    return min(
        float(n), scale * (coefficient * math.sqrt(n) + math.sqrt(n / 2 * math.log(2 * n * n / delta_prime)))
    )


def coefficient(
    kind: str, n_columns: int, n_classes: int, step: float, radius: float, clip: float, rate: str = "zero-one"
) -> float:
    """The rate's ``c``: 1 (perceptron, and softmax with ``rate="zero-one"``), or OGD's bound on the
    log loss scaled by its largest value (softmax with ``rate="log-loss"``)."""
    if kind == "perceptron" or rate == "zero-one":
        return 1.0
    norm = math.sqrt(n_columns * clip * clip + 1)  # the largest |z|, the bias included
    diameter = 2 * radius
    lipschitz = math.sqrt(2) * norm  # |(p - e_y) z^T| <= sqrt(2) |z|
    largest = math.log(n_classes) + 2 * radius * norm  # the log loss on the ball
    return (diameter**2 / (2 * step) + lipschitz**2 * step) / largest


class TwinClassifier:
    def __init__(self, kind, columns, n_classes, step=1.0, radius=math.inf, clip=4.0, rate_scale=1.0,
                 delta_prime=0.1, smoothing="last", rate="zero-one"):  # fmt: skip
        self.kind, self.columns, self.n_classes = kind, list(columns), n_classes
        self.step, self.radius, self.clip, self.rate_scale = step, radius, clip, rate_scale
        self.delta_prime, self.smoothing = delta_prime, smoothing
        width = len(self.columns) + 1
        self.weights = [[0.0] * width for _ in range(n_classes)]
        self.weight_sums = [[0.0] * width for _ in range(n_classes)]
        self.mean = [0.0] * len(self.columns)
        self.m2 = [0.0] * len(self.columns)
        self.steps = 0
        self.coefficient = coefficient(kind, len(self.columns), n_classes, step, radius, clip, rate)

    def sd(self, i):
        variance = self.m2[i] / self.steps if self.steps else 0.0
        return math.sqrt(variance) if variance > 0 else 1.0

    def z(self, row):
        out = [1.0]
        for i, column in enumerate(self.columns):
            value = (row[column] - self.mean[i]) * (1.0 / self.sd(i))
            out.append(min(max(value, -self.clip), self.clip))
        return out

    def predict(self, weights, z):
        scores = [sum(w * v for w, v in zip(weights[c], z)) for c in range(self.n_classes)]
        best = max(scores)
        return scores.index(best), scores

    def train(self, row, y):
        j = self.steps + 1
        z = self.z(row)
        predicted, scores = self.predict(self.weights, z)
        loss = 0.0 if predicted == y else 1.0
        for c in range(self.n_classes):
            for i in range(len(z)):
                self.weight_sums[c][i] += self.weights[c][i]
        if self.kind == "softmax":
            top = max(scores)
            exps = [math.exp(s - top) for s in scores]
            total = sum(exps)
            eta = self.step / math.sqrt(j)
            for c in range(self.n_classes):
                gradient = exps[c] / total - (1.0 if c == y else 0.0)
                self.weights[c] = [w - eta * gradient * v for w, v in zip(self.weights[c], z)]
            norm = math.sqrt(sum(w * w for row_ in self.weights for w in row_))
            if norm > self.radius:
                self.weights = [[w * (self.radius / norm) for w in row_] for row_ in self.weights]
        elif predicted != y:
            self.weights[y] = [w + v for w, v in zip(self.weights[y], z)]
            self.weights[predicted] = [w - v for w, v in zip(self.weights[predicted], z)]
        self.steps = j
        for i, column in enumerate(self.columns):  # Welford
            value = row[column]
            change = value - self.mean[i]
            self.mean[i] += change / j
            self.m2[i] += change * (value - self.mean[i])
        return loss, rate(self.coefficient, self.rate_scale, j, self.delta_prime)

    def deploy(self, row, y):
        averaged = self.smoothing == "average" and self.steps > 0
        weights = [[w / self.steps for w in r] for r in self.weight_sums] if averaged else self.weights
        predicted, _ = self.predict(weights, self.z(row))
        return 0.0 if predicted == y else 1.0
