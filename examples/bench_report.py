from mt_examples.bench_report import main

if __name__ == "__main__":
    main()
