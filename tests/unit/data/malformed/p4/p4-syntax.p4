control C( { }
