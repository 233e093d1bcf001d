from mt_examples.train_tensor import main

if __name__ == "__main__":
    main()
