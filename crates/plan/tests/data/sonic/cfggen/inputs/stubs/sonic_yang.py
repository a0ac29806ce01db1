# Stand-in for sonic-yang-mgmt: only sonic-cfggen -Y (YANG input) uses it, never used here.
