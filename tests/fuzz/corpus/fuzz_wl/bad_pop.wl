op pop
