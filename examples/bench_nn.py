from mt_examples.bench_nn import main

if __name__ == "__main__":
    main()
