"""Test collection: doctests of modules whose examples need an optional extra are skipped without it.

``make test`` installs every extra, so CI runs them all; a checkout without river still runs the rest.
And the fixtures that test modules of several folders share.
"""

from importlib.util import find_spec

import pytest

#: Modules whose doctests import an optional extra, by the extra's import name.
_DOCTESTS_NEEDING = {"river": ["mlcb/river"]}

collect_ignore = [
    path for extra, paths in _DOCTESTS_NEEDING.items() if find_spec(extra) is None for path in paths
]

#: Test files that compile the same kernels, run on one worker one after the other (``make test``
#: gives each worker whole files, ``--dist loadfile``). All three run every registered policy on
#: the trap; on two workers they compiled the same Python-engine and round-loop kernels at the
#: same time (none was in the on-disk cache yet): test_testing's about 30 s of CPU twice, and
#: test_conformance's round loops are 20 of test_python_engine's 45 (72 of its 148 s of
#: compiling, measured with an empty cache). On one worker the later files find them compiled.
SAME_WORKER = {
    "tests/test_testing.py": "tests/test_python_engine.py",
    "tests/test_conformance.py": "tests/test_python_engine.py",
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` with the files of :data:`SAME_WORKER` as one unit of work."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return SAME_WORKER.get(scope, scope)

    return Scheduling(config, log)


@pytest.fixture(scope="module")
def one_loop_for_every_mix():
    """One compiled round loop for every mix of bandit algorithms and numbers of arms, in the
    module that asks for it (``pytestmark = pytest.mark.usefixtures("one_loop_for_every_mix")``).

    By default a pool's round loop is compiled for its own mix (``agents.bandit_kernels.SPECIALISED``),
    2 to 3 s the first time each mix runs: a module that runs many mixes, each with many policies
    or random pools, compiles dozens of loops for what it does not test. One loop for every mix gives
    the same results (tests/test_engine.py holds a specialised and a general loop equal), and the
    specialised loops are what the other modules run."""
    from agents import bandit_kernels

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bandit_kernels, "SPECIALISED", False)
        yield
