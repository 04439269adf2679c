"""scenario_builder"""
