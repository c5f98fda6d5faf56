"""Numba kernels: deterministic statistics only (no RNG, no privacy logic).

Each kernel module also holds a plain-numpy reference that the tests compare against. This
package deliberately imports nothing, so that ``import dpstats`` does not import numba; import a
kernel module (for example ``from dpstats._kernels import kendall``) inside the function that
needs it.
"""
