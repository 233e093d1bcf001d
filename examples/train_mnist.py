from mt_examples.train_mnist import main

if __name__ == "__main__":
    main()
