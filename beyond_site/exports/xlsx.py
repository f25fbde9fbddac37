def write(d, target):
    raise NotImplementedError
