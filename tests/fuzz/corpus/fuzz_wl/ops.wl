op push name=a id=0
op push name=b id=18446744073709551615
api call=get_device
op pop
op pop
