"""One RNG policy for every public ``rng=`` parameter (issue 13, item 5).

``rng=None`` = private mode (OS CSPRNG) and no warning; an ``int`` seed or a numpy Generator =
simulation mode, accepted with a :class:`PrivacyLeakWarning`; anything else raises a
``ValueError`` naming ``rng``. A completeness check walks the package and fails if a public
function or method with an ``rng`` / ``random_state`` parameter is missing from the table.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings

import numpy as np
import pytest

import shuffle_accounting
from shuffle_accounting._rng import PrivacyLeakWarning, check_rng
from shuffle_accounting._validation import ParameterError


def _krr():
    from shuffle_accounting.runtime import KRRRandomizer

    return KRRRandomizer(3, 1.0)


def _session(rng):
    from shuffle_accounting.runtime import CollectionSession

    return CollectionSession(3, 1.0, n_min=1, delta=1e-6, rounds=1, rng=rng)


def _mallows():
    from shuffle_accounting.dsigma import MallowsShuffler

    return MallowsShuffler([[0, 1], [0, 1]], alpha=1.0)


def _simulate(rng):
    from shuffle_accounting.runtime import simulate

    return simulate("uniform", 3, 1.0, [50], trials=1, delta=1e-3, rng=rng)


def _collection(rng):
    from shuffle_accounting.adapters._common import ShuffledCollection

    return ShuffledCollection(["a", "b"], 1.0, 2).release(["a", "b", "a"], rng=rng)


def _rng_only(fn):
    """Run ``fn(rng)`` whose data argument is deliberately invalid: it is checked after ``rng``.

    Used for the distributed backends, whose ``rng`` handling runs on the driver before any
    cluster is touched (their real runs are tested in test_runtime_dask/spark.py).
    """

    def call(rng):
        try:
            fn(rng)
        except ParameterError as exc:
            if "data must be" not in str(exc):
                raise

    return call


def _counts_session():
    from shuffle_accounting.runtime import CollectionSession

    return CollectionSession(3, 1.0, n_min=1, delta=1e-6, rounds=1)


#: canonical name (defining module + qualified name) -> callable of ``rng`` exercising it.
CASES = {
    "shuffle_accounting._rng.check_rng": lambda rng: check_rng(rng),
    "shuffle_accounting.runtime.randomizer.KRRRandomizer.randomize_codes": lambda rng: _krr().randomize_codes(
        [0, 1, 2], rng=rng
    ),
    "shuffle_accounting.runtime.randomizer.KRRRandomizer.randomize": lambda rng: _krr().randomize(
        [0, 1, 2], rng=rng
    ),
    "shuffle_accounting.runtime.shuffler.Shuffler.shuffle": lambda rng: (
        __import__("shuffle_accounting.runtime", fromlist=["Shuffler"])
        .Shuffler(2)
        .shuffle([1, 2, 3], rng=rng)
    ),
    "shuffle_accounting.runtime.session.CollectionSession": _session,
    "shuffle_accounting.runtime.baseline.gaussian_histogram": lambda rng: __import__(
        "shuffle_accounting.runtime", fromlist=["gaussian_histogram"]
    ).gaussian_histogram([10, 5], 1.0, 1e-6, rng=rng),
    "shuffle_accounting.runtime.simulation.simulate": _simulate,
    "shuffle_accounting.dsigma.mallows.sample_mallows": lambda rng: __import__(
        "shuffle_accounting.dsigma", fromlist=["x"]
    ).sample_mallows(5, 1.0, rng=rng),
    "shuffle_accounting.dsigma.mechanism.MallowsShuffler.permutation": lambda rng: _mallows().permutation(
        rng=rng
    ),
    "shuffle_accounting.dsigma.mechanism.MallowsShuffler.shuffle": lambda rng: _mallows().shuffle(
        [1, 2], rng=rng
    ),
    "shuffle_accounting.dsigma.utility.kendall_preservation_delta_mc": lambda rng: __import__(
        "shuffle_accounting.dsigma.utility", fromlist=["x"]
    ).kendall_preservation_delta_mc(10, [1, 2, 3], 0.5, 1.0, trials=5, rng=rng),
    "shuffle_accounting.adapters._common.ShuffledCollection.release": _collection,
    "shuffle_accounting.runtime.counts.simulation_entropy": lambda rng: __import__(
        "shuffle_accounting.runtime.counts", fromlist=["x"]
    ).simulation_entropy(rng),
    "shuffle_accounting.runtime.counts.collect_partitions": lambda rng: __import__(
        "shuffle_accounting.runtime.counts", fromlist=["x"]
    ).collect_partitions(_counts_session(), [[0, 1]], rng=rng),
    "shuffle_accounting.runtime.dask.collect": _rng_only(
        lambda rng: __import__("shuffle_accounting.runtime.dask", fromlist=["x"]).collect(
            _counts_session(), [1, 2], rng=rng
        )
    ),
    "shuffle_accounting.runtime.dask.uniform_shuffle": _rng_only(
        lambda rng: __import__("shuffle_accounting.runtime.dask", fromlist=["x"]).uniform_shuffle(
            [1, 2], rng=rng
        )
    ),
    "shuffle_accounting.runtime.spark.collect": _rng_only(
        lambda rng: __import__("shuffle_accounting.runtime.spark", fromlist=["x"]).collect(
            _counts_session(), [1, 2], rng=rng
        )
    ),
}

#: Rows that do not follow the policy yet and live outside the runtime branch (strict xfail: the
#: test starts failing, as a reminder to drop the entry, as soon as they are fixed).
NOT_YET: dict[str, str] = {}

#: Protocols (no implementation of their own) carrying an ``rng=`` parameter.
PROTOCOLS = {"shuffle_accounting.runtime.shuffler.ShufflerLike.shuffle"}

#: Public ``random_state=`` parameters that follow another library's convention on purpose.
OTHER_CONVENTIONS = {
    # diffprivlib's DPMechanism convention: random_state may be a RandomState; see adapters/diffprivlib.py.
    "shuffle_accounting.adapters.diffprivlib",
}

BAD = [
    True,
    False,
    np.bool_(True),
    1.0,
    1.5,
    float("nan"),
    "0",
    b"1",
    -1,
    [1],
    np.random.RandomState(0),
    np.random.PCG64(0),
]


def _mark(name):
    if name in NOT_YET:
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=NOT_YET[name]))
    return name


NAMES = [_mark(n) for n in CASES]


@pytest.mark.parametrize("name", list(CASES))
def test_none_is_private_and_silent(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        CASES[name](None)


@pytest.mark.parametrize("seed", [0, 7, np.int64(3)], ids=["0", "7", "np.int64"])
@pytest.mark.parametrize("name", list(CASES))
def test_seeds_warn(name, seed):
    with pytest.warns(PrivacyLeakWarning, match="NOT private"):
        CASES[name](seed)


@pytest.mark.parametrize("name", list(CASES))
def test_generators_warn(name):
    with pytest.warns(PrivacyLeakWarning, match="NOT private"):
        CASES[name](np.random.default_rng(1))


@pytest.mark.parametrize(
    "bad",
    BAD,
    ids=lambda v: (
        f"{type(v).__name__}:{v}"
        if np.ndim(v) == 0 and not hasattr(v, "random_raw") and not hasattr(v, "randint")
        else type(v).__name__
    ),
)
@pytest.mark.parametrize("name", NAMES)
def test_everything_else_raises(name, bad):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # rejected before any warning
        with pytest.raises(ParameterError, match="rng must be None"):
            CASES[name](bad)


def test_seeded_runs_are_reproducible():
    with pytest.warns(PrivacyLeakWarning):
        a = _krr().randomize_codes(np.zeros(50, dtype=np.int64), rng=11)
        b = _krr().randomize_codes(np.zeros(50, dtype=np.int64), rng=11)
    assert a.tolist() == b.tolist()


def _public_rng_callables():
    import shuffle_accounting.adapters as adapters

    found = set()
    for pkg in (shuffle_accounting, adapters):
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
            if any(part.startswith("_") and part != "__init__" for part in info.name.split(".")[1:]):
                continue
            try:
                mod = importlib.import_module(info.name)
            except ImportError:  # an optional extra is missing
                continue
            if info.name in OTHER_CONVENTIONS:
                continue
            for attr in getattr(mod, "__all__", ()):
                obj = getattr(mod, attr)
                members = [(attr, obj)]
                if inspect.isclass(obj):
                    members += [
                        (f"{attr}.{m}", f)
                        for m, f in vars(obj).items()
                        if callable(f) and not m.startswith("_")
                    ]
                for qual, fn in members:
                    try:
                        params = inspect.signature(fn).parameters
                    except (TypeError, ValueError):
                        continue
                    if "rng" in params or "random_state" in params:
                        home = (
                            obj.__module__ if inspect.isclass(obj) else getattr(fn, "__module__", info.name)
                        )
                        found.add(f"{home}.{qual}")
    return found


def test_every_public_rng_parameter_is_in_the_table():
    found = _public_rng_callables()
    covered = set(CASES)
    missing = {q for q in found if q not in covered and q not in PROTOCOLS}
    assert not missing, f"public rng= parameters missing from the policy table: {sorted(missing)}"
    assert len(found) >= 8
