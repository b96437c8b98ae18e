"""petsc/tests/petsc4py_test.py — the matrix type "spmat" from petsc4py, against AIJ.

    mpiexec -n 2 python3 petsc4py_test.py .../libspmat_petsc.so

petsc4py loads the library with -dll_append (nothing else is needed to register the type); a
Laplacian assembled element by element as "spmat" (format sell) and as "aij" must give the same
products and CG iterations. Prints "N passed, M failed, K skipped"; exits 1 on a failure, 77
(skip) when petsc4py is not importable.
"""
import sys

try:
    import petsc4py
except ImportError as e:
    print(f"skip petsc4py: {e}\n0 passed, 0 failed, 1 skipped")
    sys.exit(77)

petsc4py.init(["-dll_append", sys.argv[1], "-mat_spmat_format", "sell"])
from petsc4py import PETSc  # noqa: E402

comm = PETSc.COMM_WORLD
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    # Every check compares collective results (norms, iteration counts): the same on all ranks.
    passed += bool(ok)
    failed += not ok
    PETSc.Sys.Print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}")


def laplacian(mat_type, n=50):
    A = PETSc.Mat().create(comm=comm)
    A.setSizes([n * n, n * n])
    A.setType(mat_type)
    A.setPreallocationNNZ(5)
    r0, r1 = A.getOwnershipRange()
    for r in range(r0, r1):
        i, j = divmod(r, n)
        A[r, r] = 4.0
        for c, inside in ((r - n, i > 0), (r + n, i < n - 1), (r - 1, j > 0), (r + 1, j < n - 1)):
            if inside:
                A[r, c] = -1.0
    A.assemble()
    return A


S, R = laplacian("spmat"), laplacian("aij")
check("type", S.getType() in ("seqaijspmat", "mpiaijspmat"), S.getType())
x = S.createVecRight()
x.setRandom()
ys, yr = S.createVecLeft(), R.createVecLeft()
S.mult(x, ys)
R.mult(x, yr)
e = (ys - yr).norm(PETSc.NormType.INFINITY) / yr.norm(PETSc.NormType.INFINITY)
check("mult", e < 1e-12, f"error {e:.1e}")
S.multTranspose(x, ys)
R.multTranspose(x, yr)
e = (ys - yr).norm(PETSc.NormType.INFINITY) / yr.norm(PETSc.NormType.INFINITY)
check("multTranspose", e < 1e-12, f"error {e:.1e}")
its = []
for A in (S, R):
    ksp = PETSc.KSP().create(comm=comm)
    ksp.setOperators(A)
    ksp.setType("cg")
    ksp.getPC().setType("jacobi")
    ksp.setTolerances(rtol=1e-8)
    b = A.createVecLeft()
    b.set(1.0)
    u = A.createVecRight()
    ksp.solve(b, u)
    its.append(ksp.getIterationNumber())
check("KSP CG + Jacobi, same iterations as AIJ", its[0] == its[1] and its[0] > 0, f"{its[0]} vs {its[1]}")
PETSc.Sys.Print(f"{passed} passed, {failed} failed, 0 skipped")
sys.exit(1 if failed else 0)
