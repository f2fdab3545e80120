"""QIF leakage: Bayes vulnerability of k-RR, of the shuffle, and of both (Jurado et al.).

Run:  python examples/qif_leakage.py

Single-target Bayes vulnerability is the probability that an optimal adversary guesses one
user's value: ``V[N]`` for k-RR alone, ``V[S]`` for the shuffle alone, ``V[NS]`` for both,
against the uninformed adversary; and the strong adversary who knows all other users' values.
``V[S]`` comes with a certified interval.
"""

from __future__ import annotations

from shuffle_accounting import qif

N, K = 200, 2


def main() -> None:
    v_s = qif.shuffle_vulnerability(k=K, n=N)  # Thm. 17
    print(f"n={N}, k={K}: V[S] (shuffle only) = {v_s:.6f}; prior vulnerability = {1 / K}")
    for p in (0.9, 0.7, 0.55):
        v_ns = qif.krr_shuffle_vulnerability(K, p, N)
        print(f"  k-RR keeping the value with probability {p}: V[NS] = {v_ns:.5f}")
        assert 1 / K <= v_ns <= v_s + 1e-12
    b = qif.shuffle_vulnerability_bounds(k=3, n=1000)
    print(f"n=1000, k=3: V[S] in [{b.lower:.12f}, {b.upper:.12f}] (certified)")
    print(
        f"all-but-one adversary (p=0.8, others 100/100): {qif.all_but_one_vulnerability(0.8, [100, 100]):.5f}"
    )


if __name__ == "__main__":
    main()
