if __name__ == "__main__":
    from scenario_builder.cli import main

    main()
