from mt_examples.bench_scalar import main

if __name__ == "__main__":
    main()
