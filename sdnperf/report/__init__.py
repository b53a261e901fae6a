"""Statistics, the comparison table, plots and the HTML report; reads only the store."""
