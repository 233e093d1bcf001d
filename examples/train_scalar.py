from mt_examples.train_scalar import main

if __name__ == "__main__":
    main()
