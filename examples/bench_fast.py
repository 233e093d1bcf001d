from mt_examples.bench_fast import main

if __name__ == "__main__":
    main()
