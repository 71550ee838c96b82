# comment
api call=get_device
   # indented comment
