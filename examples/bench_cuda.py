"""``python examples/bench_cuda.py --help``: runs ``mt_examples/bench_cuda.py``."""

from mt_examples.bench_cuda import main

if __name__ == "__main__":
    main()
