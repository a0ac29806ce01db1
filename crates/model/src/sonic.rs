//! SONiC dynamic-buffer headroom model (sonic-swss buffer_headroom_mellanox.lua). Under construction.
