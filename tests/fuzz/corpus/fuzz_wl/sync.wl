sync what=stream stream=7
sync what=device
