"""sim_core"""
