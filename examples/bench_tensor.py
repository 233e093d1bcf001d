from mt_examples.bench_tensor import main

if __name__ == "__main__":
    main()
