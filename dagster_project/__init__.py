"""dagster_project"""
