from legalrag.cli import main

main()
