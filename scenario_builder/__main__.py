# The guard, and the import inside it: a worker process (warehouse.prefetch) re-imports the parent's main
# module; it must neither run the CLI nor pay for importing it.
if __name__ == "__main__":
    from scenario_builder.cli import main

    main()
