! A Fortran program calling LAPACK's DPOTRF, DPOTRS and DPOSV as Fortran programs do (gfortran
! passes the hidden lengths of the CHARACTER arguments), linked to the system LAPACK only. Run
! under LD_PRELOAD=libtessera_lapack.so by run_fortran_test.sh.
program fortran_caller
  implicit none
  integer, parameter :: n = 400, nrhs = 3
  double precision :: a(n, n), f(n, n), b(n, nrhs), x(n, nrhs)
  double precision :: error
  integer :: info, i, j, failures

  failures = 0
  ! A symmetric, diagonally dominant matrix; b = A * ones, so x = ones.
  do j = 1, n
    do i = 1, n
      a(i, j) = 1.0d0 / (1 + abs(i - j))
    end do
    a(j, j) = a(j, j) + n
  end do
  b = spread(sum(a, dim=2), 2, nrhs)

  f = a
  call dpotrf('U', n, f, n, info)
  x = b
  if (info == 0) call dpotrs('U', n, nrhs, f, n, x, n, info)
  error = maxval(abs(x - 1.0d0))
  print '(a, i0, a, es9.2)', 'DPOTRF + DPOTRS: info ', info, ', max|x - 1| = ', error
  if (info /= 0 .or. error > 1.0d-12) failures = failures + 1

  f = a
  x = b
  call dposv('L', n, nrhs, f, n, x, n, info)
  error = maxval(abs(x - 1.0d0))
  print '(a, i0, a, es9.2)', 'DPOSV: info ', info, ', max|x - 1| = ', error
  if (info /= 0 .or. error > 1.0d-12) failures = failures + 1

  print '(i0, a)', failures, ' failed'
  if (failures /= 0) stop 1
end program fortran_caller
