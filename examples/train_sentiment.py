from mt_examples.train_sentiment import main

if __name__ == "__main__":
    main()
