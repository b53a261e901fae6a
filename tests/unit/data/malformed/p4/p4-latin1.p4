// café
