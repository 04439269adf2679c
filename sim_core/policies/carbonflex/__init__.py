"""CarbonFlex (Hanafy, Wu, Irwin, Shenoy, "CarbonFlex: Enabling Carbon-aware Provisioning and Scheduling for
Cloud Clusters", arXiv:2505.18357, 2025; docs/baselines.md): a learning phase (:mod:`.oracle`: the oracle of
Algorithm 1 replayed daily over the past week, a knowledge base of Table 2's state -> servers provisioned and
threshold rho, over a job history of 7 weeks) and an execution phase (:mod:`.kernel`: k = 5 nearest
neighbours provision each site hour by hour in whole servers, Algorithm 3 scales jobs by marginal throughput
above rho). ``carbonflex_scaled``: the same with the k-NN over standardised features."""

from .kernel import (
    CARBONFLEX,
    CARBONFLEX_SCALED,
    CarbonFlexState,
    knn_provision,
    new_state,
    run,
    schedule_alg3,
)
from .oracle import (
    CF_HISTORY_DAYS,
    CF_WINDOW_DAYS,
    K_NN,
    KB_ROWS,
    N_COLS,
    N_REPLAYS,
    SLOT_STEPS,
    carbonflex_learn,
    oracle_alg1,
)

__all__ = ["CARBONFLEX", "CARBONFLEX_SCALED", "CF_HISTORY_DAYS", "CF_WINDOW_DAYS", "KB_ROWS", "K_NN", "N_COLS",
           "N_REPLAYS", "SLOT_STEPS", "CarbonFlexState", "carbonflex_learn", "knn_provision", "new_state",
           "oracle_alg1", "run", "schedule_alg3"]
