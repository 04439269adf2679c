"""gridshift_plots: how every gridshift figure looks and is saved (matplotlib's object API on Agg).

Its own package, beside the ground floor rather than in it, so that nothing that reads or writes data
(gridshift, pipelines, warehouse, sim_core) imports matplotlib unless it draws a figure.
"""
