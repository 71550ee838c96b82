memcpy dir=htod bytes=1 dur_ns=1 stream=1
memcpy dir=dtoh bytes=4 dur_ns=2 stream=1
memcpy dir=dtod bytes=8 dur_ns=3 stream=2
memset bytes=16 value=255 dur_ns=4 stream=3
