"""``python examples/train_scalar.py --help``: runs ``mt_examples/train_scalar.py``."""

from mt_examples.train_scalar import main

if __name__ == "__main__":
    main()
