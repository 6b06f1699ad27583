"""placeholder"""
XFAIL = {}
def register():
    pass
