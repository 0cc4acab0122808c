"""Models shared by optimizer plugins: GP, Bayesian linear regression, MCMC, acquisitions."""
