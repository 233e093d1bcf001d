from mt_examples.parallel_check import main

if __name__ == "__main__":
    main()
