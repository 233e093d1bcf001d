"""Task 0.5: set the weights of a small network by hand (``python run_manual.py --help``)."""

from mt_examples.run_manual import main

if __name__ == "__main__":
    raise SystemExit(main())
