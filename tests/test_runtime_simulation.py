"""Simulation (Biswas et al. Fig. 2 style), generators, CSV input, Gaussian baseline, plot and CLI."""

from __future__ import annotations

import argparse
import math

import numpy as np
import pytest

from shuffle_accounting._validation import ParameterError
from shuffle_accounting.presentation.simulate_command import add_subcommand
from shuffle_accounting.presentation.simulation_plot import plot_simulation
from shuffle_accounting.runtime import (
    HISTOGRAM_L2_SENSITIVITY,
    CategoricalData,
    KRRRandomizer,
    gaussian_histogram,
    gaussian_sigma,
    load_csv,
    normal_binned_distribution,
    simulate,
    total_variation,
    uniform_distribution,
    zipf_distribution,
)

# Seeds and Generators are used on purpose here (simulation mode): expect the warning.
pytestmark = pytest.mark.filterwarnings("ignore::shuffle_accounting._rng.PrivacyLeakWarning")


class FixedAccountant:
    """Fake accountant: epsilon fixed, independent of the events."""

    def __init__(self, eps=1.0):
        self.eps = eps

    def compose(self, event, count=1):
        return self

    def get_epsilon(self, delta):
        return self.eps


def test_generators():
    p = normal_binned_distribution(15)
    assert p.shape == (15,) and abs(p.sum() - 1) < 1e-12 and np.allclose(p, p[::-1])
    assert np.all(np.diff(p[:8]) > 0)  # unimodal, peak in the middle
    z = zipf_distribution(4, s=2.0)
    assert np.allclose(z, np.array([1, 1 / 4, 1 / 9, 1 / 16]) / (1 + 1 / 4 + 1 / 9 + 1 / 16))
    assert uniform_distribution(5).tolist() == [0.2] * 5
    for fn in (normal_binned_distribution, zipf_distribution, uniform_distribution):
        with pytest.raises(ParameterError, match="k"):
            fn(1)
    with pytest.raises(ParameterError, match="variance"):
        normal_binned_distribution(3, variance=0)
    with pytest.raises(ParameterError, match="s"):
        zipf_distribution(3, s=float("nan"))


def test_simulate_shapes_determinism_and_ordering():
    kw = dict(trials=4, delta=1e-6, rng=11, accountant_factory=FixedAccountant)
    res = simulate("normal", 5, 2.0, [300, 30_000], **kw)
    again = simulate("normal", 5, 2.0, [300, 30_000], **kw)
    for m in ("shuffle", "shuffle+INV", "gaussian"):
        assert res.tv[m].shape == (2, 4)
        assert np.array_equal(res.tv[m], again.tv[m])
        assert np.all(res.tv[m] >= 0)
    assert res.eps0 == KRRRandomizer(5, 2.0).effective_eps0
    assert all(0 < e for e in res.epsilons)
    # denoising helps, and errors shrink with n
    assert np.all(res.mean("shuffle+INV") < res.mean("shuffle"))
    assert res.mean("shuffle+INV")[1] < res.mean("shuffle+INV")[0]
    assert "shuffle+INV" in res.table() and "30000" in res.table()


def test_simulate_with_the_default_accountant():
    res = simulate("normal", 4, 2.0, [150, 300], trials=2, delta=1e-6, rng=4)
    r = KRRRandomizer(4, 2.0)
    # one shuffled round is never worse than the local guarantee (slack for a discretized bound)
    assert all(0 < e <= r.effective_eps0 * 1.001 + 1e-6 for e in res.epsilons)
    with pytest.raises(ParameterError, match="method"):
        res.mean("nope")


def test_histogram_sampler_has_the_krr_law():
    """Raw "shuffle" TV at large n converges to (1 - q') * TV(pi, uniform): checks the sampler's mean."""
    pi = np.array([0.7, 0.2, 0.1])
    r = KRRRandomizer(3, 1.0)
    res = simulate(pi, None, 1.0, 1_000_000, trials=3, rng=5, accountant_factory=FixedAccountant)
    expected = (1 - float(r.keep_probability)) * total_variation(pi, uniform_distribution(3))
    # the dataset's empirical distribution differs from pi by O(1/sqrt(n)); the k-RR noise likewise
    assert np.all(np.abs(res.tv["shuffle"] - expected) < 0.005)
    assert np.all(res.tv["shuffle+INV"] < 0.01)


def test_simulate_with_fake_accountant_uses_its_epsilon():
    res = simulate("uniform", 3, 1.0, [100], trials=2, rng=0, accountant_factory=lambda: FixedAccountant(0.5))
    assert res.epsilons == (0.5,)
    with pytest.raises(ParameterError, match="epsilon"):
        simulate("uniform", 3, 1.0, [100], trials=1, rng=0, accountant_factory=lambda: FixedAccountant(0.0))
    with pytest.raises(ParameterError, match="epsilon"):
        simulate(
            "uniform", 3, 1.0, [100], trials=1, rng=0, accountant_factory=lambda: FixedAccountant(math.inf)
        )


def test_csv_and_categorical_data(tmp_path):
    f = tmp_path / "checkins.csv"
    rows = ["place,user"] + [f"{'AB'[i % 2] if i % 5 else 'C'},{i}" for i in range(300)]
    f.write_text("\n".join(rows) + "\n")
    data = load_csv(f, "place")
    assert data.categories == ("A", "B", "C") and data.codes.size == 300
    assert load_csv(f, 0).categories == data.categories
    res = simulate(data, None, 2.0, [100, 300], trials=2, rng=1, accountant_factory=FixedAccountant)
    assert res.k == 3
    with pytest.raises(ParameterError, match="n must be <="):
        simulate(data, None, 2.0, [301], trials=1, rng=1, accountant_factory=FixedAccountant)
    with pytest.raises(ParameterError, match="k must match"):
        simulate(data, 4, 2.0, [10], trials=1, rng=1, accountant_factory=FixedAccountant)
    with pytest.raises(ParameterError, match="column"):
        load_csv(f, "nope")
    (tmp_path / "gap.csv").write_text("c\nA\n\nB\n ,\n")
    with pytest.raises(ParameterError, match="line 5"):
        load_csv(tmp_path / "gap.csv", "c")
    (tmp_path / "one.csv").write_text("c\nA\nA\n")
    with pytest.raises(ParameterError, match="2 distinct"):
        load_csv(tmp_path / "one.csv")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ParameterError, match="empty"):
        load_csv(tmp_path / "empty.csv")
    with pytest.raises(ParameterError, match="codes"):
        CategoricalData(("a", "b"), np.array([0, 2]))
    with pytest.raises(ParameterError, match="categories"):
        CategoricalData(("a", "a"), np.array([0]))
    assert np.allclose(CategoricalData.from_labels([3, 1, 3]).true_distribution(), [1 / 3, 2 / 3])


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(source="cauchy"), "source"),
        (dict(source=[0.5, 0.6]), "source"),
        (dict(source=[1.0]), "source"),
        (dict(source="normal", k=None), "k"),
        (dict(k=1), "k"),
        (dict(eps0=0.0), "eps0"),
        (dict(eps0=True), "eps0"),
        (dict(n=0), "n"),
        (dict(n=[]), "n"),
        (dict(n="100"), "n"),
        (dict(n=[10, 2.5]), "n"),
        (dict(n=True), "n"),
        (dict(trials=0), "trials"),
        (dict(delta=0.0), "delta"),
        (dict(rng=-2), "rng"),
    ],
)
def test_simulate_bad_parameters(kwargs, name):
    base = dict(
        source="uniform",
        k=3,
        eps0=1.0,
        n=[10],
        trials=1,
        delta=1e-6,
        rng=0,
        accountant_factory=FixedAccountant,
    )
    base.update(kwargs)
    with pytest.raises(ParameterError, match=name):
        simulate(base.pop("source"), base.pop("k"), base.pop("eps0"), base.pop("n"), **base)


def test_gaussian_baseline():
    assert HISTOGRAM_L2_SENSITIVITY == math.sqrt(2)
    s1, s2 = gaussian_sigma(1.0, 1e-6), gaussian_sigma(3.0, 1e-6)
    assert s1 > s2 > 0
    assert gaussian_sigma(1.0, 1e-6, sensitivity=2 * math.sqrt(2)) == pytest.approx(2 * s1)
    # classical calibration sqrt(2 ln(1.25/delta)) * Delta / eps is an upper bound for eps <= 1
    assert s1 < math.sqrt(2 * math.log(1.25 / 1e-6)) * math.sqrt(2) / 1.0
    noisy = gaussian_histogram(np.zeros(4000), 1.0, 1e-6, rng=0)
    assert abs(noisy.std() / s1 - 1) < 0.06 and abs(noisy.mean()) < 4 * s1 / math.sqrt(4000)
    assert np.array_equal(
        gaussian_histogram([5, 6], 1.0, 1e-6, rng=3), gaussian_histogram([5, 6], 1.0, 1e-6, rng=3)
    )
    assert gaussian_histogram([5, 6], 1.0, 1e-6).shape == (2,)  # private mode (secrets)
    for kw, name in [
        (dict(epsilon=0.0), "epsilon"),
        (dict(delta=1.0), "delta"),
        (dict(sensitivity=-1.0), "sensitivity"),
    ]:
        args = dict(epsilon=1.0, delta=1e-6, sensitivity=1.0)
        args.update(kw)
        with pytest.raises(ParameterError, match=name):
            gaussian_sigma(args["epsilon"], args["delta"], sensitivity=args["sensitivity"])
    with pytest.raises(ParameterError, match="counts"):
        gaussian_histogram([[1, 2]], 1.0, 1e-6)
    with pytest.raises(ParameterError, match="counts"):
        gaussian_histogram([-1, 2], 1.0, 1e-6)


def test_plot_and_cli(tmp_path, capsys):
    res = simulate("zipf", 4, 2.0, [100, 1000], trials=2, rng=0, accountant_factory=FixedAccountant)
    out = plot_simulation(res, tmp_path / "a.png")
    assert (tmp_path / "a.png").read_bytes()[:4] == b"\x89PNG" and out.endswith("a.png")
    with pytest.raises(ParameterError, match="result"):
        plot_simulation("nope", tmp_path / "b.png")
    parser = argparse.ArgumentParser()
    add_subcommand(parser.add_subparsers())
    fig = tmp_path / "fig.png"
    args = parser.parse_args(
        [
            "simulate",
            "--source",
            "uniform",
            "--k",
            "3",
            "--n",
            "100,200",
            "--trials",
            "2",
            "--seed",
            "1",
            "--plot",
            str(fig),
            "--no-progress",
        ]
    )
    assert args.func(args) == 0
    text = capsys.readouterr().out
    assert "NOT private" in text and "shuffle+INV" in text and fig.exists()
    csv = tmp_path / "d.csv"
    csv.write_text("x\n" + "\n".join("abc"[i % 3] for i in range(60)) + "\n")
    args = parser.parse_args(
        [
            "simulate",
            "--csv",
            str(csv),
            "--column",
            "x",
            "--n",
            "50",
            "--trials",
            "1",
            "--seed",
            "2",
            "--no-progress",
        ]
    )
    assert args.func(args) == 0
    assert "k=3" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        parser.parse_args(["simulate", "--n", "0"])
    with pytest.raises(SystemExit):
        parser.parse_args(["simulate", "--n", "abc"])


@pytest.mark.parametrize("path", [0, 3, 1.5, None, b"data.csv", ["a.csv"]])
def test_load_csv_rejects_non_paths(path):
    with pytest.raises(ParameterError, match="path must be a file path"):
        load_csv(path)


def test_private_mode_simulation_draws_from_the_os_csprng():
    import warnings

    from shuffle_accounting.runtime import PrivacyLeakWarning
    from shuffle_accounting.runtime.simulation import csprng_multinomial

    counts = csprng_multinomial(200_000, np.array([0.5, 0.25, 0.25]))
    assert counts.sum() == 200_000
    assert np.all(np.abs(counts / 200_000 - [0.5, 0.25, 0.25]) < 0.01)  # ~10 sigma

    class Fixed:  # the accounting is not under test here (keeps the test fast)
        def compose(self, event, count=1):
            return self

        def get_epsilon(self, delta):
            return 0.5

    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        res = simulate("zipf", 4, 2.0, [300, 3000], trials=2, delta=1e-6, rng=None, accountant_factory=Fixed)
        data = CategoricalData.from_labels(list("aabbbcdd") * 50)
        res2 = simulate(data, None, 1.0, 400, trials=1, delta=1e-6, accountant_factory=Fixed)
    assert res.tv["shuffle"].shape == (2, 2) and np.all(np.isfinite(res.tv["shuffle+INV"]))
    assert res2.tv["gaussian"].shape == (1, 1)


@pytest.mark.parametrize("epsilon", [0.01, 0.5, 1.0, 5.0, 30.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 0.1])
def test_gaussian_sigma_is_the_smallest_admissible_noise(epsilon, delta):
    """Balle and Wang (2018), Theorem 8, evaluated in mpmath at 50 digits: the returned sigma is
    admissible and 1e-9 less is not."""
    import mpmath

    mpmath.mp.dps = 50
    s = mpmath.sqrt(2)

    def exact_delta(sigma):
        sigma = mpmath.mpf(sigma)
        a, b = s / (2 * sigma), epsilon * sigma / s
        return mpmath.ncdf(a - b) - mpmath.e**epsilon * mpmath.ncdf(-a - b)

    sigma = gaussian_sigma(epsilon, delta)
    assert exact_delta(sigma) <= delta
    assert exact_delta(sigma * (1 - 1e-9)) > delta


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 2.0])
@pytest.mark.parametrize("delta", [1e-9, 1e-6, 1e-3])
def test_gaussian_sigma_agrees_with_diffprivlib(epsilon, delta):
    from diffprivlib.mechanisms import GaussianAnalytic

    theirs = GaussianAnalytic(epsilon=epsilon, delta=delta, sensitivity=math.sqrt(2))._scale
    assert gaussian_sigma(epsilon, delta) == pytest.approx(theirs, rel=1e-6)
