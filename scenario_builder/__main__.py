from scenario_builder.cli import main

main()
