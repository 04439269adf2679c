"""Workloads: the Alibaba trace readers (2020 incl. its live download, 2023), the synthetic
generator, the derivation of a year of tasks, and the plots."""
