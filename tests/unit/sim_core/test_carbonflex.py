"""CarbonFlex as its paper describes it (Hanafy et al., arXiv:2505.18357): the oracle of Algorithm 1 on a
hand-made case against brute force, the knowledge base of Table 2 in whole servers per hour, the k = 5
nearest-neighbour provisioning of Algorithm 2, and the threshold rho of Algorithm 3."""

from __future__ import annotations

import datetime as dt
import itertools

import numpy as np
import pytest

from sim_core.policies import carbonflex as CF
from sim_core.policies.carbonflex import oracle as O
from tests.unit.sim_core.test_baselines import HOUR, STEP, one_dc, run


def _oracle_case():
    """Two jobs over four one-hour slots of carbon 300, 100, 200, 400. A: 2 h of work at scale 1 on 1 server,
    elastic to 2 servers at marginal throughput 0.5; B: 1 h on 1 server, not elastic."""
    a = np.zeros(2)
    dl = np.full(2, 4 * HOUR)
    work = np.array([2 * HOUR, HOUR])
    r = np.ones(2)
    smin, smax, mthr = np.ones(2), np.array([2.0, 1.0]), np.array([0.5, 0.0])
    return a, dl, work, r, smin, smax, mthr, np.array([300.0, 100.0, 200.0, 400.0])


def _frac(r, M):
    """Each job's request at scale 1 as fractions of a site of M one-core servers (cores only)."""
    return np.stack([r / M, np.zeros_like(r), np.zeros_like(r)], axis=1)


def _alg1(a, dl, work, r, smin, smax, mthr, ci, M):
    """Algorithm 1 in one-hour slots on a site of M servers; (scale per slot, servers used per slot, rho, done)."""
    x, used, rho, done = CF.oracle_alg1(a, dl, work, r, _frac(r, M), smin, smax, mthr, ci, HOUR)
    return x, used[:, 0] * M, rho, done


def _brute_force(ci, M):
    """Least carbon (server-hours x intensity) over every whole-server allocation of the case that finishes
    both jobs within M servers a slot."""
    best = np.inf
    for xa in itertools.product((0, 1, 2), repeat=4):
        for xb in itertools.product((0, 1), repeat=4):
            if any(xa[q] + xb[q] > M for q in range(4)):
                continue
            done_a = sum(0.0 if x == 0 else 1.0 + 0.5 * (x - 1) for x in xa)
            if done_a < 2.0 or sum(xb) < 1:
                continue
            best = min(best, sum((xa[q] + xb[q]) * ci[q] for q in range(4)))
    return best


def test_oracle_of_algorithm_1_equals_brute_force_on_a_hand_made_case():
    """Sorted by p_j(k) / CI_t: A's and B's base servers in the 100 slot first, then A's second server there
    (0.5 / 100) ties with A's base in the 200 slot but finds the slot full; A's base at 200 finishes it. Carbon
    100 + 100 + 200 = 400 server-g, the brute-force least; rho is 1 where only base servers ran."""
    a, dl, work, r, smin, smax, mthr, ci = _oracle_case()
    alloc, used, rho, done = _alg1(a, dl, work, r, smin, smax, mthr, ci, 2.0)
    assert alloc.tolist() == [[0.0, 1.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0]]
    assert used.tolist() == [0.0, 2.0, 1.0, 0.0]
    assert (done >= work).all()
    assert float((used * ci).sum()) == _brute_force(ci, 2) == 400.0
    assert rho.tolist() == [1.0, 1.0, 1.0, 1.0]
    # three servers: A's second server fits in the 100 slot (the least marginal throughput used there: 0.5)
    alloc3, used3, rho3, _ = _alg1(a, dl, work, r, smin, smax, mthr, ci, 3.0)
    assert alloc3[0].tolist() == [0.0, 2.0, 1.0, 0.0] and used3 == pytest.approx([0.0, 3.0, 1.0, 0.0])
    assert rho3.tolist() == [1.0, 0.5, 1.0, 1.0]
    # a job that arrives in the third slot is never placed before it
    a2 = np.array([0.0, 2 * HOUR])
    alloc2, *_ = _alg1(a2, dl, work, r, smin, smax, mthr, ci, 2.0)
    assert alloc2[1].tolist() == [0.0, 0.0, 1.0, 0.0]


def test_oracle_checks_capacity_per_resource_not_by_dominant_share():
    """A CPU job (all the site's cores) and a GPU job (all its GPUs, no cores), both 1 h, due in 2 h, carbon
    100 then 500: per resource both fit in the 100 slot together. Summing the two jobs' dominant shares (1 + 1
    server-equivalents against a capacity of 1) would push one into the 500 slot."""
    frac = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    x, used, _, done = CF.oracle_alg1(np.zeros(2), np.full(2, 2 * HOUR), np.full(2, HOUR), np.ones(2), frac,
                                      np.ones(2), np.ones(2), np.zeros(2), np.array([100.0, 500.0]), HOUR)
    assert x.tolist() == [[1.0, 0.0], [1.0, 0.0]] and (done >= HOUR).all()
    assert used.tolist() == [[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]


def _alg3(r, smin, smax, mthr, budget, m_avail, rho, M=100.0):
    """Algorithm 3 on a site of M one-core servers (cores only) with m_avail of them provisioned and free."""
    frac = np.stack([r / M, np.zeros_like(r), np.zeros_like(r)], axis=1)
    return CF.schedule_alg3(r, frac, smin, smax, mthr, budget, np.full(3, m_avail / M), rho)


def test_threshold_rho_scales_only_jobs_whose_marginal_throughput_reaches_it():
    """Algorithm 3 with room for everything: the job whose marginal throughput (0.3) is below rho = 0.5 gets
    only its base servers; the one above (0.8) is scaled to its maximum; rho = 0.2 scales both."""
    r = np.array([2.0, 2.0])
    smin, smax, mthr = np.ones(2), np.full(2, 3.0), np.array([0.3, 0.8])
    budget = np.array([HOUR, HOUR])
    assert _alg3(r, smin, smax, mthr, budget, 100.0, 0.5).tolist() == [1.0, 3.0]
    assert _alg3(r, smin, smax, mthr, budget, 100.0, 0.2).tolist() == [3.0, 3.0]
    assert _alg3(r, smin, smax, mthr, budget, 100.0, 0.9).tolist() == [1.0, 1.0]
    # 5 servers: both bases (4), then one server to the more elastic job; 2 servers: one base only, the job
    # with the smaller delay budget first (the other gets nothing: it waits)
    assert _alg3(r, smin, smax, mthr, budget, 5.0, 0.2).tolist() == [1.0, 1.5]
    assert _alg3(r, smin, smax, mthr, np.array([2 * HOUR, HOUR]), 2.0, 0.2).tolist() == [0.0, 1.0]


def test_algorithm_3_fills_each_resource_separately():
    """A site of 10 servers, 2 provisioned (20 % of each resource): a GPU job (all of the share's GPUs) does
    not keep a CPU job (all of the share's cores) from its servers -- summing their dominant shares would."""
    frac = np.array([[0.0, 0.2, 0.0], [0.2, 0.0, 0.0], [0.1, 0.0, 0.0]])
    x = CF.schedule_alg3(np.ones(3), frac, np.ones(3), np.ones(3), np.zeros(3), np.array([HOUR, 2 * HOUR, 3 * HOUR]),
                         np.full(3, 0.2), 1.0)
    assert x.tolist() == [1.0, 1.0, 0.0]


def _kb(n_rows):
    tab = np.zeros((n_rows, O.N_COLS))
    tab[:, O.F_CI] = np.arange(n_rows) * 100.0  # state: carbon 0, 100, 200, ...; everything else 0
    tab[:, O.D_M] = np.arange(n_rows) + 0.0  # the oracle used as many servers as the row's index
    tab[:, O.D_RHO] = np.linspace(1.0, 0.0, n_rows)
    return tab


def test_provisioning_is_the_mean_of_the_five_nearest_past_states_in_whole_servers():
    """k = 5 (the paper's): a state at carbon 1010 is nearest to the rows at 1000, 900, 1100, 800, 1200
    (servers 10, 9, 11, 8, 12: mean 10); rho is their mean; a fractional mean is rounded up to whole servers."""
    assert CF.K_NN == 5
    tab = _kb(30)
    state = np.zeros(O.N_FEAT)
    state[O.F_CI] = 1010.0
    m, rho = CF.knn_provision(tab, state, CF.K_NN, False)
    assert m == 10.0 and rho == pytest.approx(tab[8:13, O.D_RHO].mean())
    state[O.F_CI] = 1240.0  # rows 10..14 (servers 10..14): 12 exactly
    assert CF.knn_provision(tab, state, CF.K_NN, False)[0] == 12.0
    tab[:, O.D_M] += 0.2  # a mean of 12.2 servers provisions 13 whole servers
    assert CF.knn_provision(tab, state, CF.K_NN, False)[0] == 13.0
    # rows without a provisioning (NaN: a block of the knowledge base not yet learned) are not in it
    tab[6:, O.D_M] = np.nan
    assert CF.knn_provision(tab, state, CF.K_NN, False)[0] == pytest.approx(np.ceil(tab[1:6, O.D_M].mean()))


def test_scaled_knn_weighs_carbon_and_job_counts_by_their_spread():
    """Rows at carbon 0, 1, ..., 9 g/kWh (sd 2.87); rows 0-4 hold 200 jobs, rows 5-9 none (sd 100). A state at
    the dirtiest carbon (9) with 120 jobs: over the raw state the job count rules (80 jobs off rows 0-4 against
    120 off rows 5-9, the carbon gaps of a few g/kWh hardly count), so it copies rows 0-4 (servers 0..4: mean
    2); standardised, rows 5-9 are 1.2 sd off in jobs and 0-1.4 sd in carbon, rows 0-4 0.8 sd in jobs but
    1.7-3.1 sd in carbon, so it copies rows 5-9 (servers 5..9: mean 7)."""
    tab = np.zeros((10, O.N_COLS))
    tab[:, O.F_CI] = np.arange(10) + 0.0
    tab[:, O.D_M] = np.arange(10) + 0.0
    tab[:5, O.F_Q0] = 200.0
    state = np.zeros(O.N_FEAT)
    state[O.F_Q0] = 200.0  # the greenest state with the busy rows' queue: rows 0-4 either way
    assert CF.knn_provision(tab, state, 5, False)[0] == CF.knn_provision(tab, state, 5, True)[0] == 2.0
    state[O.F_CI], state[O.F_Q0] = 9.0, 120.0
    assert CF.knn_provision(tab, state, 5, False)[0] == 2.0
    assert CF.knn_provision(tab, state, 5, True)[0] == 7.0
    # a constant feature (the elasticity: 0 in every row) ranks no row above another
    state[O.F_ELAST] = 0.7
    assert CF.knn_provision(tab, state, 5, True)[0] == 7.0


def _daily(n_days):
    k = np.arange(n_days * 96)
    return 300.0 - 200.0 * np.cos(2 * np.pi * (k / 96.0 - 0.5))  # trough (100) at 12:00 every day


def _tasks(arr, n, dur, cores, max_delay):
    from sim_core.engine.layout import Tasks

    f = np.full
    return Tasks(arrival=arr, duration=f(n, dur), cores=f(n, cores), gpus=np.zeros(n), mem=f(n, 1.0),
                 bw=np.zeros(n), deadline=arr + max_delay + dur, origin=np.zeros(n, np.int32), u_rand=np.zeros(n),
                 max_delay=f(n, max_delay), interruptible=np.zeros(n, np.bool_), ckpt=np.zeros(n), smin=np.ones(n),
                 smax=np.ones(n), mthr=np.zeros(n), flexible=np.ones(n, np.bool_),
                 ds=np.full(n, -1, np.int32), ds_gb=np.zeros(n))


def test_learning_phase_stores_table_2_states_and_whole_servers_per_hour():
    """Two days of history; each day 4 flexible 1-h jobs of 10 cores (32-core servers: 0.3125 server each)
    arrive at 02:00 with 20 h of allowed delay. The oracle (in 15-minute steps) runs day 0's in the four
    greenest steps, 11:30 to 12:30 around the 12:00 trough: 40 of the site's 320 cores, 1.25 of its 10
    servers, provisioned as 2 whole servers in the hours 11:00 and 12:00; every other slot with a whole day
    ahead in the window gets 0.
    The state counts the 4 jobs in the 24-h queue from 02:00 until 12:00 and carries the slot's carbon and
    its day-ahead rank (12:00 is the greenest: rank 0)."""
    from sim_core.engine.layout import CFG_CPS, CFG_MPS, CFG_N_C, N_SRV_CFG

    c = _daily(3)
    hist = np.full((4, 1, c.shape[0]), np.nan)
    hist[0, 0, :192] = c[:192]
    arr = np.r_[np.full(4, 8 * STEP), np.full(4, (96 + 8) * STEP)]
    T = _tasks(arr, 8, HOUR, 10.0, 20 * HOUR)
    cfg = np.zeros((1, N_SRV_CFG))
    cfg[0, CFG_N_C], cfg[0, CFG_CPS], cfg[0, CFG_MPS] = 10, 32.0, 256.0
    table, rate = _kb_table(), np.zeros((1, 3))
    CF.carbonflex_learn(hist, 192, T, _none(), np.array([[320.0, 0.0, 2560.0]]), cfg, 192 * STEP, table, rate, True)
    rows = int(rate[0, 0])
    assert rows == 48 - 23
    tab = _learned(table)
    assert tab[:, O.D_M].tolist() == [2.0 if q in (11, 12) else 0.0 for q in range(rows)]
    assert (tab[:, O.D_RHO] == 1.0).all() and tab[12, O.F_RANK] == 0.0
    assert tab[:, O.F_CI] == pytest.approx(c[:rows * 4].reshape(rows, 4).mean(axis=1))
    assert tab[:, O.F_Q0 + 1].tolist() == [4.0 if 2 <= q <= 12 else 0.0 for q in range(rows)]
    assert (tab[:, O.F_Q0] == 0).all() and (tab[:, O.F_Q0 + 2] == 0).all()
    # a day of history (24 slots: one with a whole day ahead) is fewer rows than k = 5: nothing is learned
    t2, r2 = _kb_table(), np.zeros((1, 3))
    CF.carbonflex_learn(hist, 96, T, _none(), np.array([[320.0, 0.0, 2560.0]]), cfg, 96 * STEP, t2, r2, True)
    assert r2[0, 0] == 0.0


def _kb_table():
    """One site's empty knowledge base (``CarbonFlexState.table``)."""
    return np.full((1, O.N_REPLAYS * O.KB_ROWS, O.N_COLS), np.nan)


def _learned(table):
    """The rows site 0's knowledge base holds, in block order."""
    return table[0][~np.isnan(table[0, :, O.D_M])]


def _none():
    """No tasks (a run's empty job history)."""
    return _tasks(np.zeros(0), 0, HOUR, 10.0, 20 * HOUR)


def _split(T, n):
    """The first n tasks of T and the rest, as two task tables."""
    return T._replace(**{f: getattr(T, f)[:n] for f in T._fields}), T._replace(**{f: getattr(T, f)[n:]
                                                                                   for f in T._fields})


def test_learning_replays_the_jobs_that_arrived_before_the_run():
    """The learning phase of the test above at the start of day 2, for a run that started at day 1: day 0's
    jobs are not the run's but its job history (``Plan.past``). The knowledge base is the same as when every
    job is the run's -- the provisioning of the 11:00 and 12:00 slots included -- and without the history it
    is the zero-job states of the cold-start bug (no servers anywhere, no job in any queue)."""
    from sim_core.engine.layout import CFG_CPS, CFG_MPS, CFG_N_C, N_SRV_CFG

    c = _daily(3)
    hist = np.full((4, 1, c.shape[0]), np.nan)
    hist[0, 0, :192] = c[:192]
    T = _tasks(np.r_[np.full(4, 8 * STEP), np.full(4, (96 + 8) * STEP)], 8, HOUR, 10.0, 20 * HOUR)
    cfg = np.zeros((1, N_SRV_CFG))
    cfg[0, CFG_N_C], cfg[0, CFG_CPS], cfg[0, CFG_MPS] = 10, 32.0, 256.0
    cap = np.array([[320.0, 0.0, 2560.0]])
    tabs = []
    for past, run_T in ((_none(), T), _split(T, 4), (_none(), _split(T, 4)[1])):
        table, rate = _kb_table(), np.zeros((1, 3))
        CF.carbonflex_learn(hist, 192, run_T, past, cap, cfg, 192 * STEP, table, rate, True)
        tabs.append(_learned(table))
    assert tabs[0].shape[0] == 25 and np.array_equal(tabs[0], tabs[1])
    assert tabs[1][:, O.D_M].tolist() == [2.0 if q in (11, 12) else 0.0 for q in range(25)]
    # without it: day 0's slots hold no job (day 1's jobs, arriving at 26:00, are past row 24's start)
    assert (tabs[2][:, O.D_M] == 0).all() and (tabs[2][:, O.F_Q0:O.F_Q0 + 3] == 0).all()


def test_a_run_started_mid_bundle_provisions_as_one_that_ran_from_the_start(tmp_path):
    """The case below run from the start of day 3 (one day): its first learning phase replays days 0-2 with
    the jobs that arrived then (its job history), so its jobs start at 10:00 as on day 3 of the run from the
    bundle's start -- not at their deadline, as when it learned zero-job states (the cold-start bug)."""
    n_days = 5
    c = _daily(n_days)
    arr = np.concatenate([np.full(4, d * 96 * STEP + 8 * STEP) for d in range(n_days - 1)])
    n = arr.shape[0]
    tasks = {"arrival_ts_utc": arr, "duration_s": np.full(n, HOUR), "cpu_cores": np.full(n, 10.0),
             "mem_gb": np.full(n, 1.0), "max_delay_s": np.full(n, 20 * HOUR)}
    p = one_dc(tmp_path, tasks, c)
    whole = run(p, "carbonflex").tasks
    t0 = whole["arrival_ts_utc"][0] - dt.timedelta(seconds=8 * STEP)
    mid = run(p, "carbonflex", start=t0 + dt.timedelta(days=3), days=1).tasks
    assert mid.height == 4
    assert mid["start_ts_utc"].to_list() == whole["start_ts_utc"].to_list()[12:16]
    assert [(s - t0).total_seconds() % 86400 / HOUR for s in mid["start_ts_utc"]] == [10.0] * 4


def test_carbonflex_provisions_what_the_oracle_did_in_similar_states(tmp_path):
    """Days 0-1: nothing learned yet: the jobs start at once (02:00). From day 2 on, the five nearest past states
    of 02:00 had no servers provisioned: the jobs wait. On day 2 the knowledge base holds two provisioned slots
    (day 0's 11:00 and 12:00, 2 servers each: the oracle ran the jobs from 11:30 to 12:30): from 09:00 the
    nearest five include one, a mean of 0.4 servers that provisions 1 whole server, and the jobs start then; on
    day 3 it has learned day 1's trough too and they start at 10:00 (rows nearer the trough). None is late, and
    the carbon is below the carbon-agnostic rule's."""
    n_days = 5
    c = _daily(n_days)
    per = 4
    arr = np.concatenate([np.full(per, d * 96 * STEP + 8 * STEP) for d in range(n_days - 1)])
    n = arr.shape[0]
    tasks = {"arrival_ts_utc": arr, "duration_s": np.full(n, HOUR), "cpu_cores": np.full(n, 10.0),
             "mem_gb": np.full(n, 1.0), "max_delay_s": np.full(n, 20 * HOUR)}
    r = run(one_dc(tmp_path, tasks, c), "carbonflex")
    t = r.tasks
    t0 = t["arrival_ts_utc"][0] - dt.timedelta(seconds=8 * STEP)
    start_h = np.array([(s - t0).total_seconds() % 86400 for s in t["start_ts_utc"]]) / HOUR
    assert (start_h[:2 * per] == 2.0).all()
    assert start_h[2 * per:].tolist() == [9.0] * per + [10.0] * per
    assert r.totals["sla_violations"] == 0
    assert run(one_dc(tmp_path / "b", tasks, c), "local_only").totals["carbon_kg"] > r.totals["carbon_kg"]


def test_k_max_never_exceeds_the_site():
    """A job is never scaled to a request larger than its site (it could never start again): 10 cores at
    max_scale 7 on a 40-core site scale to 4 at most; max_scale 2 stays 2; never below min_scale."""
    from sim_core.policies.carbonflex.kernel import max_scale

    T = _tasks(np.zeros(1), 1, HOUR, 10.0, HOUR)._replace(smax=np.array([7.0]))
    assert max_scale(T, 0, np.array([[40.0, 8.0, 1000.0]]), 0) == 4.0
    assert max_scale(T._replace(smax=np.array([2.0])), 0, np.array([[40.0, 8.0, 1000.0]]), 0) == 2.0
    assert max_scale(T, 0, np.array([[5.0, 8.0, 1000.0]]), 0) == 1.0
