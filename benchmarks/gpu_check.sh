#!/usr/bin/env bash
# The GPU check of the torch mixture-of-experts pools (docs/moe.md, section "GPU").
#
#   bash benchmarks/gpu_check.sh                  on a machine with an NVIDIA GPU
#   DEVICE=cpu bash benchmarks/gpu_check.sh       the same steps on the CPU at a small size
#   bash benchmarks/gpu_check.sh --plan           print the commands of the steps, run nothing
#   bash benchmarks/gpu_check.sh --fetch-wheels   (where pip reaches an index) download into
#                                                 $WHEELS what a machine without one may lack
#
# Steps: 1. a Python with the package's dependencies: the machine's own torch is used as it is
# (with DEVICE=cuda none is ever installed, and it must see a GPU); missing dependencies come
# from the wheels in $WHEELS (no index needed) or else from the index, pinned by constraints.txt;
# 2. `pip install -e .` without dependencies (skipped where mlcb is already installed: the
# checkout runs first on PYTHONPATH anyway); 3. the device: nvidia-smi and what torch sees;
# 4. the tests marked `gpu` (tests/test_gpu.py: a pool on the GPU gives the CPU's results on the
# same seeds, device="auto" picks CUDA), required to run rather than skip; 5. the device
# section of benchmarks/bench_moe.py at R in {8, 64, 256}: rounds/s of the batched pool and the
# per-member loop on the GPU and the CPU, the targets, and the agreement with the CPU.
# Everything printed goes to $OUT/gpu_check.log; the benchmark's table and numbers to
# $OUT/bench_moe.md and $OUT/bench_moe.json (rewritten after each R), the tests' report to
# $OUT/gpu_tests.xml. No torch, a torch that sees no GPU or a dependency that cannot be installed
# stops it at once; a failing later step is reported and the next one still runs; the exit
# status is 1 when any step failed.
#
# Sizing (DEVICE=cuda; the target is the whole run under 8 minutes on one H200). The benchmark
# sizes each timed run from the rate of a short one so that its rounds last about
# SECONDS_PER_RUN = 6 s. It times 14 pools: at R = 8 the batched pool and the per-member loop on
# the GPU and on the CPU, at R = 64 and 256 the same and the batched pool with all replications
# in one pool. With its sizing run, setup and warm start a pool costs about 2 x 6 s, the most
# the per-member loop on the CPU at R = 256, whose warm start alone trains 4,096 members one at
# a time (about 20 s on the 2-core reference machine, where one of its rounds takes 5 s): about
# 3 minutes. The agreement runs 30 rounds in float64 and float32 on both devices at each R;
# its slow part is the CPU's batched pool at R = 256 (about 2 rounds/s on the reference
# machine): under a minute. Compiling the engine (Numba, about 20 s on the reference machine,
# then cached), starting CUDA and the tests take about a minute. Estimate: 4 to 5 minutes.
# BENCH_LIMIT (360 s) stops the benchmark if it runs long, keeping the R already written.
#
# Environment: DEVICE (cuda or cpu; default cuda), PYTHON (default python3), OUT (default
# ./gpu-check-out), WHEELS (default ./.whl), SECONDS_PER_RUN, BENCH_LIMIT.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
DEVICE=${DEVICE:-cuda}
PYTHON=${PYTHON:-python3}
OUT=${OUT:-$ROOT/gpu-check-out}
WHEELS=${WHEELS:-$ROOT/.whl}
SITE=${TMPDIR:-/tmp}/mlcb-gpu-check-site
MODE=run

case ${1:-} in
    "") ;;
    --plan) MODE=plan ;;
    --fetch-wheels) MODE=fetch ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "gpu_check.sh: unknown option '$1' (use --plan, --fetch-wheels or --help)" >&2
        exit 2
        ;;
esac
case $DEVICE in
    cuda)
        REPLICATIONS=(8 64 256)
        SECONDS_PER_RUN=${SECONDS_PER_RUN:-6}
        AGREE_HORIZON=30
        BENCH_LIMIT=${BENCH_LIMIT:-360}
        ;;
    cpu)
        REPLICATIONS=(2 20) # past one block of 16 replications: the one-pool run is rehearsed too
        SECONDS_PER_RUN=${SECONDS_PER_RUN:-1}
        AGREE_HORIZON=10
        BENCH_LIMIT=${BENCH_LIMIT:-300}
        ;;
    *)
        echo "gpu_check.sh: DEVICE must be cuda or cpu, got '$DEVICE'" >&2
        exit 2
        ;;
esac

FAILED=()

say() { printf '\n== %s\n' "$*"; }

run() { # print a command, then run it (--plan: print it only)
    printf '+ %s\n' "$(printf '%q ' "$@")"
    [[ $MODE == plan ]] || "$@"
}

step() { # step LABEL COMMAND...: run a command; a failure is noted under LABEL, and the check goes on
    local label=$1
    shift
    if ! run "$@"; then
        FAILED+=("$label")
    fi
}

die() {
    echo "gpu_check.sh: $*" >&2
    exit 1
}

# The distributions the package and its tests need (pyproject.toml: the dependencies and, of the
# dev extra, pytest and hypothesis) that this Python lacks ("missing<TAB>requirement") or holds at
# a version outside the range asked for ("old<TAB>requirement<TAB>version"); torch is checked apart.
requirements() {
    "$PYTHON" - <<'EOF'
import importlib.metadata as metadata
import tomllib
from pathlib import Path

try:
    from packaging.requirements import Requirement
except ImportError:
    from pip._vendor.packaging.requirements import Requirement

project = tomllib.loads(Path("pyproject.toml").read_text())["project"]
wanted = [Requirement(r) for r in project["dependencies"]]
wanted += [r for r in map(Requirement, project["optional-dependencies"]["dev"]) if r.name in ("pytest", "hypothesis")]
for requirement in wanted:
    try:
        version = metadata.version(requirement.name)
    except metadata.PackageNotFoundError:
        print(f"missing\t{requirement}")
        continue
    if not requirement.specifier.contains(version, prereleases=True):
        print(f"old\t{requirement}\t{version}")
EOF
}

# Fill the arrays ABSENT (requirements) and OLD ("requirement (VERSION here)") from `requirements`.
read_requirements() {
    local listed kind requirement version
    ABSENT=() OLD=()
    listed=$(requirements)
    while IFS=$'\t' read -r kind requirement version; do
        case $kind in
            missing) ABSENT+=("$requirement") ;;
            old) OLD+=("$requirement ($version here)") ;;
        esac
    done <<<"$listed"
}

dependencies() {
    say "1. Python and dependencies"
    command -v "$PYTHON" >/dev/null || die "no Python '$PYTHON' (set PYTHON)"
    "$PYTHON" -c 'import sys; print(sys.executable, sys.version)'
    if ! "$PYTHON" -c 'import torch' 2>/dev/null; then
        if [[ $DEVICE == cuda ]]; then
            die "torch is not installed for $PYTHON; this check uses the machine's CUDA build of torch and installs none (set PYTHON to a Python that has one)"
        fi
        run "$PYTHON" -m pip install --quiet -c constraints.txt torch # the pinned CPU build
    fi
    "$PYTHON" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda, "available:", torch.cuda.is_available())'
    if [[ $DEVICE == cuda ]] && ! "$PYTHON" -c 'import sys, torch; sys.exit(not torch.cuda.is_available())'; then
        die "torch sees no CUDA device here; run DEVICE=cpu for the CPU rehearsal"
    fi
    read_requirements
    if ((${#ABSENT[@]})); then
        echo "missing: ${ABSENT[*]}"
        if compgen -G "$WHEELS/*.whl" >/dev/null; then
            run "$PYTHON" -m pip install --quiet --no-index --no-deps --no-compile --target "$SITE" "$WHEELS"/*.whl ||
                echo "warning: the wheels in $WHEELS did not install"
            export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
        else # from the index, if there is one (a few seconds' patience where there is none)
            run "$PYTHON" -m pip install --quiet --retries 1 --timeout 10 -c constraints.txt "${ABSENT[@]}" ||
                echo "warning: pip could not install them"
        fi
        read_requirements
        ((${#ABSENT[@]} == 0)) || die "still missing: ${ABSENT[*]} (carry their wheels in $WHEELS: see --fetch-wheels)"
    fi
    if ((${#OLD[@]})); then # the machine's own versions are kept: upgrading them could break its torch
        echo "warning: older than pyproject.toml asks, kept as they are: ${OLD[*]}"
    fi
    echo "dependencies: all there"
}

install() {
    say "2. pip install -e ."
    if "$PYTHON" -I -c 'import importlib.metadata as m; m.version("mlcb")' 2>/dev/null; then # -I: not this folder
        echo "mlcb is already installed in this Python: left as it is (this checkout runs first, on PYTHONPATH)"
    elif ! run "$PYTHON" -m pip install --quiet --no-deps --no-build-isolation -e .; then
        echo "warning: the editable install failed; this checkout runs from PYTHONPATH alone"
    fi
    export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
    "$PYTHON" -c 'import mlcb, envs, agents.moe, numba, numpy; print("mlcb from", mlcb.__file__, "| numba", numba.__version__, "| numpy", numpy.__version__)'
}

device() {
    say "3. Device"
    if command -v nvidia-smi >/dev/null; then
        step nvidia-smi nvidia-smi
    elif [[ $DEVICE == cuda ]]; then
        FAILED+=("nvidia-smi (not found)")
    else
        echo "nvidia-smi: not on this machine (DEVICE=cpu)"
    fi
    if ! torch_report; then
        FAILED+=("torch's device report")
    fi
}

torch_report() { # what torch sees
    "$PYTHON" - <<'EOF'
import os

import torch

print("torch", torch.__version__, "| CUDA", torch.version.cuda, "| cuDNN", torch.backends.cudnn.version(), "| CPUs", os.cpu_count())
for i in range(torch.cuda.device_count()):
    p = torch.cuda.get_device_properties(i)
    print(f"cuda:{i}", p.name, f"capability {p.major}.{p.minor}", f"{p.total_memory / 2**30:.1f} GiB", f"{p.multi_processor_count} SMs")
print("device='auto' resolves to", "cuda" if torch.cuda.is_available() else "cpu")
EOF
}

check() {
    local started=$SECONDS
    if [[ $MODE == run ]]; then
        dependencies
        install
        device
    else
        echo "(--plan: the dependency check, the install and the device report are left out)"
        export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
    fi
    export PYTHONUNBUFFERED=1

    say "4. Tests marked gpu (device under test: $DEVICE)"
    local require=()
    [[ $DEVICE == cuda ]] && require=(MLCB_REQUIRE_CUDA=1)
    step "tests marked gpu" env MLCB_TEST_DEVICE="$DEVICE" "${require[@]}" "$PYTHON" -m pytest tests/test_gpu.py -m gpu \
        -q -rs -p no:cacheprovider --junitxml "$OUT/gpu_tests.xml"

    say "5. Benchmark: the device section of bench_moe.py at R in {${REPLICATIONS[*]}}"
    step "benchmark (exit status 124: stopped at BENCH_LIMIT)" timeout "$BENCH_LIMIT" "$PYTHON" benchmarks/bench_moe.py --section device --device "$DEVICE" \
        --replications "${REPLICATIONS[@]}" --seconds "$SECONDS_PER_RUN" --agree-horizon "$AGREE_HORIZON" \
        --markdown "$OUT/bench_moe.md" --json "$OUT/bench_moe.json"

    say "Done in $((SECONDS - started)) s; files in $OUT"
    [[ $MODE == plan ]] || ls -l "$OUT"
    if ((${#FAILED[@]})); then
        printf 'FAILED: %s\n' "${FAILED[@]}"
        return 1
    fi
}

fetch_wheels() { # the wheels a machine without an index may lack (default: what KINDS of GPU image lack)
    local names specs=()
    read -r -a names <<<"${FETCH:-gymnasium farama-notifications}"
    for name in "${names[@]}"; do # the version installed here, else the newest
        local version
        version=$("$PYTHON" -c "import importlib.metadata as m; print(m.version('$name'))" 2>/dev/null || true)
        specs+=("$name${version:+==$version}")
    done
    mkdir -p "$WHEELS"
    run "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --python-version "${WHEEL_PYTHON:-3.12}" \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d "$WHEELS" "${specs[@]}"
    ls -l "$WHEELS"
}

case $MODE in
    fetch) fetch_wheels ;;
    plan) check ;;
    run)
        mkdir -p "$OUT"
        check 2>&1 | tee "$OUT/gpu_check.log"
        ;;
esac
