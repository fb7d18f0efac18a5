"""The figures on results other than the presets' defaults: a horizon of 1 or 2, a pseudo-regret
of zero throughout, a regret around zero, settings that recorded no pseudo-regret, pools told apart
by their labels only, one replication, a comparison of many policies, a pool of fifty experts, a
sweep's folder. Each figure is right or refuses in one line."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest

import agents
import mlcb
from mlcb import plot

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def _texts(drawn) -> list[str]:
    """Every legend entry of a figure (below its panels and beside them), whitespace normalised."""
    figure = plot.figure_of(drawn)
    legends = list(figure.legends) + [a.get_legend() for a in figure.axes if a.get_legend() is not None]
    return [" ".join(t.get_text().split()) for legend in legends for t in legend.get_texts()]


def _drawn(axis) -> list:
    """The lines of ``axis`` that hold data (legend handles hold none)."""
    return [line for line in axis.lines if np.size(line.get_xdata())]


@pytest.fixture(scope="module")
def equal_experts():
    """Four UCB1 experts on identical arms: every expert is the best, the pseudo-regret 0."""
    return mlcb.Result.concat(
        [
            mlcb.simulate(
                env="mlcb/BanditExperts-v0",
                env_params={"reward_means": [[0.5, 0.5]] * 4},
                experts=[agents.make("ucb1")] * 4,
                budget=budget,
                horizon=200,
                replications=2,
            )
            for budget in (1, 2)
        ]
    )


def test_a_slope_needs_a_decade_of_rounds_and_three_points_in_it():
    rounds = np.arange(1.0, 1001.0)
    assert plot.last_decade_slope(rounds, rounds**0.5) == pytest.approx(0.5)
    assert np.isnan(plot.last_decade_slope([1.0, 2.0], [0.1, 0.3]))  # a horizon of 2: no decade
    assert np.isnan(plot.last_decade_slope([1.0, 5.0, 10.0], [0.1, 0.0, 0.3]))  # two usable points
    assert np.isnan(plot.last_decade_slope([1.0, 10.0], [0.1, 0.3]))


def test_no_slope_is_stated_for_a_curve_that_reaches_zero_or_below_in_its_last_decade(equal_experts):
    """A realised regret around zero: the slope was fitted to its positive points only."""
    grid = plot.theory(equal_experts, metric="regret")
    for axis in grid.axes.ravel():
        assert "fitted slope" not in axis.texts[0].get_text()
    plt.close(grid.figure)
    grid = plot.regret(equal_experts, metric="regret")
    assert not any("slope" in text for text in _texts(grid))
    plt.close(grid.figure)


def test_a_horizon_of_one_or_two_draws_points_and_states_no_slope():
    """At a horizon of 1 every curve was a line of one point, which matplotlib does not draw: the
    figures were empty under a legend of what they held; at 2, the legend gave a 'slope' through
    two points."""
    for horizon in (1, 2):
        result = mlcb.simulate(preset="trap", budget=2, horizon=horizon, replications=2)
        grid = plot.regret(result)
        assert not any("slope" in text for text in _texts(grid)), _texts(grid)
        lines = _drawn(grid.ax)
        assert lines and all(
            (line.get_marker() not in ("None", None, "")) == (np.size(line.get_xdata()) == 1)
            for line in lines
        )
        plt.close(grid.figure)
        grid = plot.panels(result)  # its rounds on a linear axis: ticks at whole rounds (was 1, 1, 1, 1)
        ticks = grid.axes.ravel()[0].get_xticks()
        assert ticks.size and np.all(ticks == np.round(ticks)), ticks
        plt.close(grid.figure)
        grid = plot.theory(result)
        assert all(_drawn(axis) for axis in grid.axes.ravel())
        stated = " ".join(t.get_text() for t in grid.ax.texts)
        assert "fitted slope" not in stated and "nan" not in stated, stated
        plt.close(grid.figure)


def test_a_pseudo_regret_of_zero_throughout_is_drawn_on_a_symmetric_log_axis(equal_experts):
    """Zero does not exist on a log axis: the curves vanished while the legend named them."""
    assert (equal_experts.curves["pseudo_regret"] == 0).all()
    grid = plot.regret(equal_experts)
    assert grid.ax.get_yscale() == "symlog"
    assert sum(np.all(line.get_ydata() == 0) for line in _drawn(grid.ax)) >= 2  # a mean each
    plt.close(grid.figure)
    grid = plot.theory(equal_experts)
    for axis in grid.axes.ravel():
        assert (
            axis.get_yscale() == "symlog" and axis.texts[0].get_position()[1] > 0.5
        )  # text up, off the curve
    plt.close(grid.figure)


def test_a_metric_some_setting_did_not_record_is_refused_and_never_the_default():
    """Trap (pseudo-regret) beside the cardiotocography stream (none): the default was pseudo-regret,
    and the real-data setting silently missing from every figure."""
    both = mlcb.Result.concat(
        [
            mlcb.simulate(preset="trap", budget=1, horizon=40, replications=1, label="trap M=1"),
            mlcb.simulate(preset="ctg", budget=1, horizon=40, replications=1, label="ctg M=1"),
        ]
    )
    assert plot.default_metric(both) == "regret"
    message = "metric 'pseudo_regret': settings 'ctg M=1' record no value of it (streams of real data, where no expected loss is known, record no pseudo-regret); use metric='regret'"
    for kind in (plot.regret, plot.panels, plot.theory, plot.budget):
        with pytest.raises(ValueError) as caught:
            kind(both, metric="pseudo_regret")
        assert str(caught.value) == message
    grid = plot.regret(both)
    assert {"trap M=1", "ctg M=1"} <= {text.split(" (")[0] for text in _texts(grid)}
    plt.close(grid.figure)


def test_the_budget_figure_keeps_pools_told_apart_by_their_labels_only():
    """Two pools at each budget, same policy: they were averaged into one line named 'mlcb'; and
    with one replication the legend spoke of error bars that were not there."""
    pools = {"UCB1": [agents.make("ucb1")] * 10, "UCB1 c=3": [agents.make("ucb1", c=3.0)] * 10}
    result = mlcb.Result.concat(
        [
            mlcb.simulate(
                preset="trap", experts=pool, budget=m, label=f"{name} M={m}", horizon=60, replications=1
            )
            for name, pool in pools.items()
            for m in (1, 2)
        ]
    )
    grid = plot.budget(result)
    texts = _texts(grid)
    assert {"UCB1", "UCB1 c=3"} <= set(texts) and "mlcb" not in texts, texts
    assert not any("error bars" in text for text in texts), texts
    plt.close(grid.figure)


def test_the_budget_figure_never_joins_two_budgets_into_one_line_against_t():
    """Two pools at one budget and horizon, one of them also at another budget and horizon: named
    by their labels without 'T=...', the two settings of pool A (M=1 at T=40, M=2 at T=80) were
    one line against T, the theorem's curve drawn with the first one's M. They are two points."""
    pools = {"A": [agents.make("ucb1")] * 10, "B": [agents.make("ucb1", c=3.0)] * 10}
    settings = [("A", 1, 40), ("B", 1, 40), ("A", 2, 80)]
    result = mlcb.Result.concat(
        [
            mlcb.simulate(
                preset="trap", experts=pools[name], budget=m, horizon=t, label=f"{name} T={t}", replications=1
            )
            for name, m, t in settings
        ]
    )
    grid = plot.budget(result)
    against_t = grid.axes.ravel()[1]
    texts = [" ".join(t.get_text().split()) for t in against_t.get_legend().get_texts()]
    assert {"M=1 A", "M=2 A", "B"} <= set(texts) and "A" not in texts, texts
    assert all(len(set(line.get_xdata())) == 1 for line in _drawn(against_t))  # no line joins two T
    plt.close(grid.figure)


def test_figure_arguments_of_the_wrong_kind_are_refused(equal_experts):
    with pytest.raises(TypeError) as caught:
        plot.theory(equal_experts, settings="mlcb M=1")  # was read as the settings 'm', 'l', ...
    assert str(caught.value) == (
        "settings must be a list of the result's setting names (['mlcb M=1']), got 'mlcb M=1'"
    )
    with pytest.raises(ValueError, match=r"^theory must be True or False, got 'no'$"):
        plot.regret(equal_experts, theory="no")


def test_a_comparison_of_many_settings_gives_each_policy_a_hue_and_each_budget_a_shade():
    """Twelve settings and more took as many hues, neighbours indistinguishable."""
    import colorsys

    entries = [(policy, (1, 2, 3, 4)) for policy in ("mlcb", "limited-advice", "greedy")]
    result = mlcb.compare("trap", entries, horizon=30, replications=1)
    grid = plot.regret(result, theory=False)
    legend = grid.figure.legends[0]
    colours = {
        text.get_text(): line.get_color() for line, text in zip(legend.get_lines(), legend.get_texts())
    }
    plt.close(grid.figure)
    hues = {}
    for setting in result.settings:
        rgb = matplotlib.colors.to_rgb(colours[next(label for label in colours if label.startswith(setting))])
        hues.setdefault(setting.split(" M=")[0], []).append((colorsys.rgb_to_hls(*rgb)[0], rgb))
    assert len({rgb for shades in hues.values() for _, rgb in shades}) == 12  # every setting its own
    for shades in hues.values():
        assert max(h for h, _ in shades) - min(h for h, _ in shades) < 0.02  # one hue per policy
    assert len({round(shades[0][0], 2) for shades in hues.values()}) == 3


def test_the_panels_of_a_large_pool_keep_the_experts_never_deployed():
    """Over 40 experts the counts are lines; on a log axis each zero broke them into spikes."""
    result = mlcb.simulate(
        env="mlcb/BanditExperts-v0",
        env_params={"reward_means": [[0.4, 0.6]] * 50},
        experts=[agents.make("ucb1")] * 50,
        horizon=100,
        replications=1,
    )
    grid = plot.panels(result)
    deployed = grid.axes.ravel()[1]
    assert deployed.get_yscale() == "symlog" and deployed.get_ylim()[0] == 0
    assert 0 in _drawn(deployed)[0].get_ydata()
    plt.close(grid.figure)


def test_a_figure_takes_the_folder_of_a_sweep_as_mlcb_plot_does(tmp_path):
    """A sweep's folder was 'not a saved mlcb result' to the figure functions (and read by
    ``mlcb plot``)."""
    grid = {"preset": "trap", "name": "two", "replications": 1, "horizon": 50, "grid": {"budget": [1, 2]}}
    outcome = mlcb.sweep(grid, out=tmp_path, workers=1)
    drawn = plot.regret(outcome.path)
    assert {"mlcb M=1", "mlcb M=2"} <= {text.split(" (")[0] for text in _texts(drawn)}
    plt.close(drawn.figure)


def test_a_run_of_a_pool_without_declared_exponents_states_its_theorem(equal_experts):
    """Only a sweep recorded the pool's rate exponent; a run of UCB1 experts (which declare none)
    had 'exponent unknown' and no theorem's curve in its theory figure. Every run records it."""
    exponent = equal_experts.metadata["settings"]["mlcb M=1"]["rate_exponent"]
    assert 0.5 < exponent < 0.6  # UCB1's rate grows as sqrt(n log n)
    drawn = plot.theory(equal_experts, settings=["mlcb M=1"])
    text = " ".join(t.get_text() for axis in plot.figure_of(drawn).axes for t in axis.texts)
    assert f"(α = {exponent:.2f})" in text and "unknown" not in text
    plt.close(plot.figure_of(drawn))


def test_an_older_result_without_the_exponent_reads_epsilon_greedys_rate_exponent():
    """A result saved before runs recorded ``rate_exponent``: its experts' ``alpha`` stands in, and
    for epsilon-greedy with the valid rate that is the exploration schedule's exponent, below the
    rate's max(alpha, 1 - alpha/2) for alpha < 2/3."""
    import copy

    from agents.bandits import EpsilonGreedy

    for alpha, rate, exponent in [(0.3, "theory", 0.85), (0.3, "authors", 0.3), (0.75, "theory", 0.75)]:
        experts = [EpsilonGreedy(alpha=alpha, rate=rate)] * 10
        result = mlcb.simulate(preset="trap", experts=experts, budget=1, horizon=30, replications=1)
        older = copy.deepcopy(result.metadata)
        del older["settings"]["mlcb M=1"]["rate_exponent"]
        result.metadata = older
        assert plot.setting_values(result, "mlcb M=1")["alpha"] == exponent
