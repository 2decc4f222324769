create pd 0
expect EINVAL
