from mt_examples.bench_cuda import main

if __name__ == "__main__":
    main()
