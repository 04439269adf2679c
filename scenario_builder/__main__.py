from scenario_builder.cli import main

if __name__ == "__main__":  # not when a worker process (warehouse.prefetch) re-imports the parent's main module
    main()
