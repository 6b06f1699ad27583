"""DDP communication hooks (``ddp.register_comm_hook(state, hook)``): see :mod:`.default_hooks`."""
