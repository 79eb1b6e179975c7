# Writes the small .npy/.npz files data's tests read (NumPy):
#   /usr/bin/python3 make_npy.py
import numpy as np
np.save("f4.npy", np.array([[1.5, -2.0, 0.25], [3.0, 4.0, 5.0]], dtype="<f4"))
np.save("f8.npy", np.array([0.1, 1e300, -7.0], dtype="<f8"))
np.save("i8.npy", np.array([[-3], [2**40]], dtype="<i8"))
np.save("u1.npy", np.arange(250, 256, dtype=np.uint8).reshape(2, 3))
np.save("fortran.npy", np.asfortranarray(np.arange(6.0).reshape(2, 3)))
np.savez_compressed("pair.npz", x=np.eye(2), y=np.array([7, 8], dtype="<i8"))
