# Stand-in for the C++ swsscommon binding: sonic-cfggen imports these names but, rendering
# from files (-j/-p/-k, never -d or --write-to-db), never calls them.
class _Unavailable:
    """A connector to a Redis that is not there: constructing it works, connecting fails,
    as on a host without the database (callers catch that and read files instead)."""

    def __init__(self, *a, **k):
        pass

    def connect(self, *a, **k):
        raise ConnectionError("swsscommon stub: no Redis here; render from files only")

    def db_connect(self, *a, **k):
        raise ConnectionError("swsscommon stub: no Redis here; render from files only")

class ConfigDBConnector(_Unavailable):
    # CONFIG_DB keys join their parts with "|" (KEY_SEPARATOR in sonic-swss-common
    # common/configdb.h); sonic-cfggen turns tuple keys into strings and back with these.
    KEY_SEPARATOR = "|"

    @staticmethod
    def serialize_key(key):
        return "|".join(key) if isinstance(key, tuple) else str(key)

    @staticmethod
    def deserialize_key(key):
        tokens = key.split("|")
        return tuple(tokens) if len(tokens) > 1 else key

class ConfigDBPipeConnector(_Unavailable):
    pass

class SonicV2Connector(_Unavailable):
    pass

class SonicDBConfig:
    @staticmethod
    def isInit():
        return False
    @staticmethod
    def isGlobalInit():
        return False
    @staticmethod
    def load_sonic_global_db_config(*a, **k):
        raise RuntimeError("swsscommon stub: no database config")
    @staticmethod
    def initialize(*a, **k):
        # Loads database_config.json to reach Redis; rendering from files never does.
        pass
