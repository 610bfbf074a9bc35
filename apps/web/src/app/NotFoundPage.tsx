import { Link } from 'react-router';
import { PageHeader } from '../ui/PageHeader';

export default function NotFoundPage() {
  return (
    <>
      <PageHeader title="Page not found" />
      <p>
        There is nothing at this address. <Link to="..">Back to the overview</Link>
      </p>
    </>
  );
}
