"""Render the observation layouts of the Gymnasium environment (three example sites) and the default reward
into docs/rl.md.

    ./run.sh python benchmarks/rl_layout_doc.py

The tables come from ``sim_core.rl.env.feature_layout``, ``sim_core.rl.decision.decision_feature_names``,
``FEATURE_MEANINGS`` and
``sim_core.rl.reward.DEFAULT_REWARD``;
tests/unit/sim_core/rl/test_registration.py fails when docs/rl.md differs from what this writes.
"""

from __future__ import annotations

from benchmarks._report import ROOT, update_section

RL_MD = ROOT / "docs" / "rl.md"
EXAMPLE_SITES = ("US-CAL-CISO", "DE-LU", "SG")


def sections() -> dict[str, str]:
    """Marker name -> the Markdown table it holds."""
    from sim_core.rl.decision import decision_feature_names
    from sim_core.rl.env import feature_layout, layout_table
    from sim_core.rl.reward import default_reward_table

    single, task = feature_layout(EXAMPLE_SITES)
    return {"rl_layout_single": layout_table(single, EXAMPLE_SITES),
            "rl_layout_task": layout_table(task, EXAMPLE_SITES),
            "rl_layout_decision": layout_table(decision_feature_names(EXAMPLE_SITES), EXAMPLE_SITES),
            "rl_default_reward": default_reward_table()}


def main() -> None:
    for name, body in sections().items():
        update_section(name, body, RL_MD)
    print(f"updated {RL_MD.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
