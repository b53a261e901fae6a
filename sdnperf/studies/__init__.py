"""Building blocks of sdnperf's built-in studies (the literature's methods): pure analysis
such as the recirculation planner, and the commands around them."""
